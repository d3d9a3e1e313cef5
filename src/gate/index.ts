/** The gate: risk, policy, skill pins and approval keys. Pure domain logic, no SDK. */
export * from './approval-key.js';
export * from './bind-skill-call.js';
export * from './risk-patterns.js';
export * from './scan-scripts.js';
export * from './guard.js';
export * from './caller.js';
export * from './match-rule.js';
export * from './policy.js';
export * from './skill-pins.js';
export * from './effective-requests.js';
export * from './passkey-required.js';
export * from './four-eyes-required.js';
