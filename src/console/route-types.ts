/** A console request and its answer, as the HTTP server (console-server.ts) and the routes pass them. */
export interface RouteResponse {
  status: number;
  type: string;
  body: string;
  location?: string;
}

export interface RouteRequest {
  method: 'GET' | 'HEAD' | 'POST';
  /** The path after the secret, starting with `/`. */
  path: string;
  contentType?: string | undefined;
  /** The POST body (already size-capped). */
  body?: string;
  /** Set for `/approve/<id>`, the one page outside the secret path (`path` is then the whole path). */
  secretless?: true;
  /** True when the request carries this console's sign-in cookie (see `createSignInCookie`). */
  signedIn?: boolean;
}
