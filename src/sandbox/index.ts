/** Public API of the sandbox module. The runner imports from here. */
export type * from './types.js';
export { createSandbox, type Sandbox, type SandboxOptions } from './create-sandbox.js';
export { createBwrapAdapter, type BwrapAdapterOptions } from './bwrap-adapter.js';
export { createSeatbeltAdapter, type SeatbeltAdapterOptions } from './seatbelt-adapter.js';
export { createOffAdapter, type OffAdapterOptions } from './off-adapter.js';
export {
  ProfileSchema,
  PROFILE_NAME_RE,
  profileLimits,
  type Profile,
  type ProfileConfig,
} from './profile-schema.js';
export {
  assertProfileName,
  defaultProfilesDir,
  listProfiles,
  loadProfile,
  parseProfile,
} from './load-profile.js';
export { looserFields, resolveProfile, type ProfileResolution } from './resolve-profile.js';
export {
  createInterpreterResolver,
  interpreterForScript,
  type InterpreterResolver,
  type ResolvedInterpreter,
} from './resolve-interpreter.js';
export { filterEnv } from './filter-env.js';
export { readHostFacts, type ContainerRuntime, type HostFacts, type HostReaders } from './diagnose-bwrap.js';
