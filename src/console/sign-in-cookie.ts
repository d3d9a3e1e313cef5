import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The cookie a browser gets on every page of the console's secret path: the sign-in that lets the secret-free link
 * of one approval (`/approve/<id>`, sent to URL-mode elicitation clients) lead to that approval's page. Random for
 * this process (never the path secret), `HttpOnly` (page scripts cannot read it) and `SameSite=Strict` (another
 * site's link or form never carries it). Cookies are not scoped by port, so the name holds this listener's port, and
 * its path is `/approve`, the one page that reads it: a browser sends it to no other page of any loopback server.
 */
export interface SignInCookie {
  /** The `Set-Cookie` value for the listener on `port`. */
  header(port: number): string;
  /** True when a request's `Cookie` header holds the sign-in of the console on `port`. */
  signedIn(cookieHeader: string | undefined, port: number): boolean;
}

const nameFor = (port: number) => `skills-mcp-console-${port}`;

export function createSignInCookie(): SignInCookie {
  const token = randomBytes(32).toString('base64url');
  const want = Buffer.from(token);
  return {
    header: (port) => `${nameFor(port)}=${token}; Path=/approve; HttpOnly; SameSite=Strict`,
    signedIn(cookieHeader, port) {
      const name = nameFor(port);
      if (cookieHeader === undefined) return false;
      return cookieHeader.split(';').some((part) => {
        const eq = part.indexOf('=');
        if (eq < 0 || part.slice(0, eq).trim() !== name) return false;
        const got = Buffer.from(part.slice(eq + 1).trim());
        return got.length === want.length && timingSafeEqual(got, want);
      });
    },
  };
}
