import { serveWorkspaceWorker } from './sandbox/serve-workspace-worker.js';

// The host side of a workspace copy, started by `spawnWorkspaceWorker` with the workspace owner's identity; it
// serves one request on stdin/stdout and exits. This is a process of its own: its stdout is a pipe to the server
// (frames only), never the MCP protocol.
/* eslint-disable no-restricted-properties */
serveWorkspaceWorker(process.stdin, process.stdout).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`workspace worker: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
