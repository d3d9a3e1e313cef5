/** The gate: risk, policy, approval keys, session grants and the approval form. Pure domain logic, no SDK. */
export * from './approval-key.js';
export * from './bind-skill-call.js';
export * from './risk-patterns.js';
export * from './scan-scripts.js';
export * from './guard.js';
export * from './caller.js';
export * from './match-rule.js';
export * from './policy.js';
export * from './approval-decision.js';
export * from './session-state.js';
export * from './display-value.js';
export * from './display-call.js';
export * from './approval-message.js';
export * from './approval-request.js';
export * from './refusal-message.js';
export * from './resolve-gate.js';
export * from './skill-pins.js';
