import type { PublishedFile } from './skill-entry.js';

/**
 * Remembers, per session, the digest and size each file had in the last entry that session was sent
 * (skills/list, skills/get), so a read can be checked against what that reader holds. Bounded: past `maxSessions`
 * the session heard from least recently is forgotten (its reads are then served unchecked, as for a session that
 * never listed).
 */
export interface ReadLedger {
  record(sessionId: string, files: readonly PublishedFile[]): void;
  expected(sessionId: string, skill: string, path: string): { digest: string; size: number } | undefined;
}

const key = (skill: string, path: string) => `${skill}\0${path}`;

export function createReadLedger(maxSessions = 256): ReadLedger {
  const sessions = new Map<string, Map<string, { digest: string; size: number }>>();
  const touch = (id: string) => {
    let files = sessions.get(id);
    if (files !== undefined) sessions.delete(id);
    files ??= new Map();
    sessions.set(id, files);
    if (sessions.size > maxSessions) sessions.delete(sessions.keys().next().value!);
    return files;
  };
  return {
    record(sessionId, files) {
      const given = touch(sessionId);
      for (const f of files) given.set(key(f.skill, f.path), { digest: f.digest, size: f.size });
    },
    expected: (sessionId, skill, path) => sessions.get(sessionId)?.get(key(skill, path)),
  };
}
