import { summarizeInput } from '../gate/index.js';

/** The audit summary of a tool input; an input that cannot be summarized is recorded as absent. */
export const safeSummary = (input: unknown) => {
  try {
    return summarizeInput(input);
  } catch {
    return summarizeInput(null);
  }
};
