// The server's clock as the sidebar estimates it from the `Date` header of its answers: expiry
// times are the server's, and a page on a machine whose clock is off would count them wrong.

/** Clock differences under this (ms) are the `Date` header's 1 s resolution, not skew. */
export const SKEW_THRESHOLD = 1500;

export class ServerClock {
  /** The server's time in ms since the epoch, as estimated. */
  now(): number {
    return Date.now() + this._offset;
  }

  /** Follow the server's clock from a `Date` header, ignoring the header's resolution. */
  update(serverDate: number): void {
    // The header truncates to the second: the server's time was half a second later on average.
    const offset = serverDate + 500 - Date.now();
    if (Math.abs(offset) < SKEW_THRESHOLD) {
      this._offset = 0;
    } else if (Math.abs(offset - this._offset) > 1000) {
      // Only a move of more than the header's resolution: no jitter from answer to answer.
      this._offset = offset;
    }
  }

  private _offset = 0;
}
