import type { GitRoot } from '../config/config-schema.js';
import type { GitSource } from '../config/git-source-schema.js';
import { isSkillsError } from '../errors.js';
import { checkGitSource, createCheckCache } from './check-git-source.js';
import { fetchGitSource } from './fetch-git-source.js';
import { checkoutDir, sourceLabel } from './git-checkout.js';

export interface GitSourceRoots {
  /** The served folder of each source that checked out as pinned. */
  roots: GitRoot[];
  /** One line per source refused: its URL, what is wrong and what fixes it. */
  problems: string[];
}

/**
 * The skills folders of the git sources, each checked against its pin on every call. A source not fetched yet is
 * fetched (the only time a start reaches the network); a checkout that differs from its pin is refused, never fetched
 * again here: `skills-mcp sources update` does that, on the operator's word.
 */
export function gitSourceRoots(
  sources: readonly GitSource[],
  sourcesDir: string,
  env: NodeJS.ProcessEnv,
): GitSourceRoots {
  const out: GitSourceRoots = { roots: [], problems: [] };
  for (const source of sources) {
    const checkout = checkoutDir(sourcesDir, source.git);
    try {
      let st = checkGitSource(source, checkout, env);
      if (st.state === 'missing') {
        fetchGitSource(source, checkout, env);
        st = checkGitSource(source, checkout, env);
      }
      const cache = createCheckCache();
      if (st.state === 'ok')
        out.roots.push({
          root: st.root,
          label: sourceLabel(source.git, st.commit),
          verify: () => {
            const now = checkGitSource(source, checkout, env, cache);
            return now.state === 'ok' ? undefined : now.state === 'missing' ? 'it is gone' : now.why;
          },
        });
      else if (st.state === 'changed')
        out.problems.push(
          `git source ${source.git}: not served: its checkout ${checkout} does not match: ${st.why}. Run \`skills-mcp sources update\` to fetch ${source.ref} again.`,
        );
      else if (st.state === 'unsafe') out.problems.push(`git source ${source.git}: not served: ${st.why}`);
      else out.problems.push(`git source ${source.git}: not served: it was not fetched`);
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      out.problems.push(
        `${e.message.startsWith('git source') ? '' : `git source ${source.git}: `}${e.message}`,
      );
    }
  }
  return out;
}
