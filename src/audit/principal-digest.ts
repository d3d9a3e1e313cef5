import { createHash } from 'node:crypto';

/**
 * What the audit log stores for an authenticated principal: the lowercase hex sha256 of its identifier, whatever
 * shape the identifier has (a token-derived id, a user name, a JWT subject). Domain-separated, so the digest of a
 * principal never equals the digest of the same bytes used elsewhere.
 */
export const principalDigest = (principal: string): string =>
  createHash('sha256').update('skills-mcp principal\0', 'utf8').update(principal, 'utf8').digest('hex');
