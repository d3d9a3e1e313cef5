import type { InputSummary } from '../gate/approval-key.js';
import type { Risk } from '../gate/guard.js';
import type { PolicyDecision } from '../gate/policy.js';
import type { OperatorGrants } from '../gate/effective-requests.js';

/** Everything the approval screen shows about one call. Host paths appear only where a person needs them. */
export interface ApprovalView {
  skill: string;
  /** Script path relative to the skill folder. */
  script: string;
  bundleSha256: string;
  /** The pinned git repository the skill comes from, as `url@short-commit`, when it comes from one. */
  source?: string;
  /** Python module run with `-m` (its file is `script`). */
  module?: string;
  /** Interpreter the script runs with (`python3`, `node`, `bash`), if any. */
  runner?: string;
  /** Arguments after the script (model args, or argv built from the input). */
  argv: readonly string[];
  /** The call waiting for this approval. */
  callId: string;
  /** The input as received: short values are shown, others marked (see `displayCall`). */
  input: unknown;
  inputSummary: InputSummary;
  sandbox: {
    /** Profile name, e.g. `default`. */
    profile: string;
    /** False when the operator turned the sandbox off. */
    enforced: boolean;
    network: 'none' | 'full';
    /** Host paths besides the skill's own files the script may read: the workspace, when it reads one. */
    readablePaths?: readonly string[];
    /** Paths the script may write (host paths, shown to the person). */
    writablePaths: readonly string[];
    /** The session's working folder (among `writablePaths`): read and changed by every run of the session. */
    sessionFolder?: string;
  };
  /** What the operator's config (`skill_overrides`) set for this skill, in place of its frontmatter: said so. */
  operator?: OperatorGrants;
  risk: Pick<Risk, 'level' | 'code' | 'findings'>;
  policy: Pick<PolicyDecision, 'decision' | 'rule'>;
  /** Input keys and flags whose values are hidden (`approval.secret_names`). */
  secretNames: readonly string[];
  /** Where the person can see the full input, when not every value is shown. */
  fullInput: string;
  /** Packages installed first, in the install sandbox, when the skill's environment is not built yet. */
  install?: { commands: readonly string[]; sources: readonly string[]; binaryOnly: boolean };
}
