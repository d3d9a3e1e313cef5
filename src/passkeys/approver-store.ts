import { readApprovers, writeApprovers, type ApproverCredential } from './approvers-file.js';

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

/** The file store of one server's state folder. */
export function fileApproverStore(stateDir: string): ApproverStore {
  const read = () => Promise.resolve().then(() => readApprovers(stateDir));
  return {
    where: `${stateDir}/approvers.json`,
    list: read,
    add: async (c) => writeApprovers(stateDir, [...(await read()), c]),
    async remove(id) {
      const all = await read();
      const rest = all.filter((a) => a.id !== id);
      if (rest.length === all.length) return false;
      writeApprovers(stateDir, rest);
      return true;
    },
    setCounter: async (id, counter) =>
      writeApprovers(
        stateDir,
        (await read()).map((a) => (a.id === id ? { ...a, counter } : a)),
      ),
  };
}
