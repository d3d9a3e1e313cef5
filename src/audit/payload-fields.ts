import { z } from 'zod';

/** Field types more than one kind of event payload holds. */

export const Sha256Schema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256')
  .describe('Lowercase hex sha256 digest');
export const CodeSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be an identifier')
  .describe('An identifier such as an error code');
