import { ProtocolError, ProtocolErrorCode, type McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension, type SkillSource } from '@modelcontextprotocol/server/ext/skills';
import type { SessionInfo } from '../../runner/session.js';
import type { Catalog } from '../../skills/catalog.js';
import type { Skill } from '../../skills/types.js';
import { createDigestCache, sha256Digest, type DigestCache } from '../../skills/digest-cache.js';
import type { SkillContent } from '../read-skill-content.js';
import type { Logger } from '../../log.js';
import { skillUri } from '../skill-uri.js';
import { pageAfter } from './page-cursor.js';
import { createReadLedger, type ReadLedger } from './read-ledger.js';
import { directoryChildren, parseDirectoryUri } from './skill-directory.js';
import { skillEntry, type SkillEntry } from './skill-entry.js';
import { servedSkills, type ServedSkills } from './served-skills.js';

/**
 * Entries follow the files on disk (hot reload; digests re-checked by stat on every answer), so a client should
 * not reuse one: `ttlMs: 0`. `private`: behind a bearer token the catalog is not for shared caches.
 */
export const SKILLS_CACHE_HINT = { ttlMs: 0, cacheScope: 'private' } as const;

/** What every server instance of one process shares: the digest cache and what each session was sent. */
/** What the extension needs of the server: its log and the catalog being served now (a part of `ServerDeps`). */
export interface ExtensionDeps {
  log: Logger;
  catalog: () => Catalog;
}

export interface SkillsExtensionState {
  digests: DigestCache;
  ledger: ReadLedger;
  served(catalog: Catalog): ServedSkills;
  /** The extension for one session's server instances, answering from the catalog being served now. */
  forSession(deps: ExtensionDeps, session: SessionInfo): SessionSkillsExtension;
}

/**
 * The Skills extension's process-wide state. The CLI imports this module only when the extension is on, so a
 * server without it never loads the extension's code.
 */
export function createSkillsExtensionState(log: Logger): SkillsExtensionState {
  const split = new WeakMap<Catalog, ServedSkills>();
  const state: SkillsExtensionState = {
    digests: createDigestCache(),
    ledger: createReadLedger(),
    served(catalog) {
      let s = split.get(catalog);
      if (s === undefined) {
        s = servedSkills(catalog);
        split.set(catalog, s);
        // Once per catalog (start-up or reload), at the first extension request.
        for (const { skill, reason } of s.leftOut)
          log.warn({ skill: skill.name, reason }, 'skill left out of the skills extension');
      }
      return s;
    },
    forSession: (deps, session) => sessionSkillsExtension(deps, state, session),
  };
  return state;
}

/** Thrown by a read check: the file's bytes no longer match the entry this session was sent. */
const changedSinceListed = (c: SkillContent) =>
  new ProtocolError(
    ProtocolErrorCode.InternalError,
    `${skillUri(c.skill.name, c.path)} changed after its skill entry was sent; call skills/get ` +
      `${skillUri(c.skill.name, c.skill.skillFile)} for the current entry, then read it again`,
  );

export interface SessionSkillsExtension {
  /** Declares `io.modelcontextprotocol/skills` (with directoryRead) on `server`; call before it connects. */
  attach(server: McpServer): void;
  /**
   * Checks the bytes about to be served for a skill file against the digest and size this session was last sent
   * for it; throws a protocol error instead of serving bytes that do not match. Files never sent pass.
   */
  checkRead: (content: SkillContent) => void;
}

function sessionSkillsExtension(
  deps: ExtensionDeps,
  state: SkillsExtensionState,
  session: SessionInfo,
): SessionSkillsExtension {
  const { digests, ledger } = state;
  const log = deps.log;
  const served = () => state.served(deps.catalog());
  const publish = (skill: Skill): SkillEntry | undefined => {
    const built = skillEntry(skill, digests, log);
    if (built === undefined) return undefined;
    ledger.record(session.id, built.files);
    return built.entry;
  };
  const source: SkillSource = {
    list: ({ cursor }) => {
      const page = pageAfter(served().skills, (s) => s.name, cursor);
      const skills = page.items.map(publish).filter((e) => e !== undefined);
      return Promise.resolve(
        page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor },
      );
    },
    get: (uri) => {
      const m = /^skill:\/\/([^/?#]+)\/SKILL\.md$/.exec(canonical(uri) ?? '');
      const skill = m?.[1] === undefined ? undefined : served().byName.get(m[1]);
      return Promise.resolve(skill === undefined ? undefined : publish(skill));
    },
    // Reads of skill files are served by the skill-files resource (registered first), which calls checkRead; this
    // template only sees URIs that name no file.
    read: () => Promise.resolve(undefined),
    readDirectory: (uri, { cursor }) => {
      const dir = parseDirectoryUri(uri, (name) => served().byName.get(name));
      if (dir === undefined) return Promise.resolve(undefined);
      const page = pageAfter(directoryChildren(dir.skill, dir.dir), (r) => r.uri, cursor);
      return Promise.resolve(
        page.nextCursor === undefined
          ? { resources: page.items }
          : { resources: page.items, nextCursor: page.nextCursor },
      );
    },
  };
  return {
    attach(server) {
      new SkillsExtension({
        source,
        cacheHint: SKILLS_CACHE_HINT,
        onWarning: (w) => log.warn({ path: w.path }, w.message),
      }).attach(server);
    },
    checkRead: (c) => {
      const given = ledger.expected(session.id, c.skill.name, c.path);
      if (given === undefined) return;
      if (c.bytes.length !== given.size || sha256Digest(c.bytes) !== given.digest)
        throw changedSinceListed(c);
    },
  };
}

const canonical = (uri: string): string | undefined => {
  try {
    return new URL(uri).href;
  } catch {
    return undefined;
  }
};
