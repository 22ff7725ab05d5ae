"""HTTP: ``http_request`` (http.request).

The operation lives in :mod:`.request` and the preview of its body in :mod:`.preview`; this
package is their public home.
"""

from __future__ import annotations

from .request import REDIRECT_STATUSES, HttpResponse, http_request

__all__ = ["REDIRECT_STATUSES", "HttpResponse", "http_request"]
