import { readdirSync } from 'node:fs';
import { writeTestSkill, type GatedFixture } from '../../helpers/gated-fixture.js';

/** A skill whose run leaves `canary.txt` in its output folder: the file exists only if the script ran. */
export const addCanary = (fx: GatedFixture): string =>
  writeTestSkill(fx.skills, 'canary', {
    description: 'Writes a canary file. Use in tests.',
    script:
      'import os\nopen(os.path.join(os.environ["SKILL_FILES_DIR"], "canary.txt"), "w").write("the canary ran")\nprint("{}")\n',
  });

export const canaryRan = (fx: GatedFixture): boolean =>
  readdirSync(fx.dir, { recursive: true, encoding: 'utf8' }).some((p) => p.endsWith('canary.txt'));
