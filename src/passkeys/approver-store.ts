import { readApprovers, writeApprovers, type ApproverCredential } from './approvers-file.js';
import { withApproversLock } from './with-approvers-lock.js';

/**
 * Where the enrolled passkeys are kept: `<state>/approvers.json` for one server, a table of the shared PostgreSQL
 * database for replicas. Read afresh on every use, so an enrolment or a removal counts at once.
 */
export interface ApproverStore {
  /** Where it is, for messages (a path, or the database table). */
  where: string;
  list(): Promise<ApproverCredential[]>;
  add(credential: ApproverCredential): Promise<void>;
  /** Removes the passkey with this id (exact); false when there was none. */
  remove(id: string): Promise<boolean>;
  /** Keeps the signature counter an assertion reported. */
  setCounter(id: string, counter: number): Promise<void>;
}

/**
 * The file store of one server's state folder. Every change is a read-modify-write of approvers.json under its lock
 * (`withApproversLock`), whichever process makes it: a signature counter's update cannot bring back a passkey
 * `approvers remove` removed meanwhile.
 */
export function fileApproverStore(stateDir: string): ApproverStore {
  const read = () => Promise.resolve().then(() => readApprovers(stateDir));
  const change = (edit: (all: ApproverCredential[]) => ApproverCredential[] | undefined) =>
    withApproversLock(stateDir, () => {
      const next = edit(readApprovers(stateDir));
      if (next !== undefined) writeApprovers(stateDir, next);
      return next !== undefined;
    });
  return {
    where: `${stateDir}/approvers.json`,
    list: read,
    add: async (c) => void (await change((all) => [...all, c])),
    remove: (id) =>
      change((all) => {
        const rest = all.filter((a) => a.id !== id);
        return rest.length === all.length ? undefined : rest;
      }),
    setCounter: async (id, counter) =>
      void (await change((all) =>
        all.some((a) => a.id === id) ? all.map((a) => (a.id === id ? { ...a, counter } : a)) : undefined,
      )),
  };
}
