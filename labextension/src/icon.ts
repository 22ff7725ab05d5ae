// The shield icon of the sidebar, and the tab icon that carries the pending count.

import { LabIcon } from '@jupyterlab/ui-components';
import { VirtualElement } from '@lumino/virtualdom';

const SHIELD_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" fill-rule="evenodd"
    d="M12 1.5 3.5 4.7v6.1c0 5.3 3.6 10.2 8.5 11.7 4.9-1.5 8.5-6.4 8.5-11.7V4.7L12 1.5zm-1.3 15.2-3.9-3.9 1.5-1.5 2.4 2.4 5.4-5.4 1.5 1.5-6.9 6.9z"/>
</svg>`;

export const shieldIcon = new LabIcon({ name: 'jupyter-approvals:shield', svgstr: SHIELD_SVG });

/**
 * The sidebar tab's icon: the shield with a badge counting the pending requests.
 *
 * A Lumino title icon is a renderer; the tab bar calls `render` on its host whenever it
 * redraws the tab, so `render` is idempotent and `count` updates every host in place.
 */
export class BadgedIcon implements VirtualElement.IRenderer {
  get count(): number {
    return this._count;
  }

  set count(value: number) {
    if (value !== this._count) {
      this._count = value;
      this._hosts.forEach(host => this._sync(host));
    }
  }

  /** Something keeps the sidebar from working (the server extension is missing): shows `!`. */
  get problem(): boolean {
    return this._problem;
  }

  set problem(value: boolean) {
    if (value !== this._problem) {
      this._problem = value;
      this._hosts.forEach(host => this._sync(host));
    }
  }

  render(host: HTMLElement): void {
    if (!host.querySelector('.jpa-Sidebar-badge')) {
      host.textContent = '';
      const wrapper = document.createElement('span');
      wrapper.className = 'jpa-Sidebar-tabIcon';
      wrapper.appendChild(shieldIcon.element({ tag: 'span', className: 'jpa-Sidebar-shield' }));
      const badge = document.createElement('span');
      badge.className = 'jpa-Sidebar-badge';
      badge.dataset.testid = 'jpa-sidebar-badge';
      wrapper.appendChild(badge);
      host.appendChild(wrapper);
    }
    this._hosts.add(host);
    this._sync(host);
  }

  unrender(host: HTMLElement): void {
    this._hosts.delete(host);
    host.textContent = '';
  }

  private _sync(host: HTMLElement): void {
    const badge = host.querySelector<HTMLElement>('.jpa-Sidebar-badge');
    if (badge) {
      const count = this._count > 99 ? '99+' : String(this._count);
      badge.textContent = this._problem ? '!' : count;
      badge.dataset.count = String(this._count);
      badge.classList.toggle('jpa-mod-problem', this._problem);
      badge.hidden = this._count === 0 && !this._problem;
    }
  }

  private _count = 0;
  private _problem = false;
  private _hosts = new Set<HTMLElement>();
}
