import { parentPort, workerData } from 'node:worker_threads';
import { serveAuditWorker } from './audit/serve-audit-worker.js';
import type { WorkerSettings } from './audit/worker-protocol.js';

// The audit log's writer thread, started by `openAuditWorker`; it serves until the server closes the log.
if (parentPort !== null) serveAuditWorker(parentPort, workerData as WorkerSettings);
