/** The approval console: a local web page for approvals when the client cannot ask, and the audit trail. */
export * from './approval-queue.js';
export * from './console-link-file.js';
export * from './open-browser.js';
export * from './request-key.js';
export * from './start-approval-console.js';
