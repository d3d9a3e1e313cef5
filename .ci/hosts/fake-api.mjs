// What the fakes of the vendors' model APIs share: an HTTP server on 127.0.0.1 (a free port) that reads each
// request's JSON body and hands it, with the path, to the fake's own handler. A body that is not JSON gets a 400.
import { createServer } from 'node:http';

/** Starts the server; `handle({ method, path, body }, res)` answers. Resolves to `{ url, close }`. */
export async function startFakeApi(handle) {
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      let body = {};
      try {
        body = JSON.parse(raw || '{}');
      } catch {
        return res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"not JSON"}');
      }
      handle({ method: req.method, path, body }, res);
    });
  });
  await new Promise((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolveClose) => server.close(resolveClose)),
  };
}
