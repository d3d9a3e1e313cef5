import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/temp-dir.js';

const MANIFESTS = join(repoRoot, 'deploy', 'kubernetes');
const SCHEMAS = join(repoRoot, 'deploy', 'schemas', 'kubernetes-1.30');
/** apiVersion/kind → the vendored strict schema (no field outside the Kubernetes API is accepted). */
const SCHEMA_FILES: Record<string, string> = {
  'apps/v1/Deployment': 'deployment-apps-v1.json',
  'v1/Service': 'service-v1.json',
  'v1/Secret': 'secret-v1.json',
  'v1/ConfigMap': 'configmap-v1.json',
};

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validators = new Map<string, ValidateFunction>();
const validatorFor = (key: string): ValidateFunction | undefined => {
  const file = SCHEMA_FILES[key];
  if (file === undefined) return undefined;
  let v = validators.get(key);
  if (v === undefined) {
    v = ajv.compile(JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8')) as object);
    validators.set(key, v);
  }
  return v;
};

/** Every problem with the objects in one YAML text, as `kind/name: path message` lines; empty when valid. */
function problems(text: string): string[] {
  const out: string[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      out.push(...doc.errors.map((e) => `yaml: ${e.message}`));
      continue;
    }
    const obj = doc.toJS() as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } } | null;
    if (obj === null) continue;
    const key = `${String(obj.apiVersion)}/${String(obj.kind)}`;
    const v = validatorFor(key);
    if (v === undefined) {
      out.push(`${key}: no vendored schema for this kind`);
      continue;
    }
    const valid: boolean = v(obj);
    if (!valid) {
      const where = `${String(obj.kind)}/${String(obj.metadata?.name)}`;
      for (const e of v.errors ?? []) {
        const extra = e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : '';
        out.push(`${where}: ${e.instancePath || '/'} ${e.message ?? ''}${extra}`);
      }
    }
  }
  return out;
}

const manifests = readdirSync(MANIFESTS).filter((f) => /\.ya?ml$/.test(f));
const read = (f: string) => readFileSync(join(MANIFESTS, f), 'utf8');

describe('the Kubernetes manifests in deploy/kubernetes', () => {
  it('are the Deployment, Service, Secret and ConfigMap', () => {
    const kinds = manifests.flatMap((f) =>
      parseAllDocuments(read(f)).map((d) => (d.toJS() as { kind: string }).kind),
    );
    expect(kinds.sort()).toEqual(['ConfigMap', 'Deployment', 'Secret', 'Service']);
  });

  it.each(manifests)('%s validates against the strict Kubernetes 1.30 schemas', (f) => {
    expect(problems(read(f))).toEqual([]);
  });

  it.each<[string, string, string, RegExp]>([
    [
      'a misspelt container field',
      'deployment.yaml',
      'readOnlyRootFilesystem: true',
      /readOnlyRootFileSystem/,
    ],
    ['a misspelt pod field', 'deployment.yaml', 'hostUsers: false', /hostUser\)/],
    ['a field at the wrong level', 'deployment.yaml', '      hostUsers: false', /procMount|hostUsers/],
    ['a misspelt Service field', 'service.yaml', 'targetPort: http', /targetport/],
    ['a wrong value type', 'deployment.yaml', 'replicas: 3', /\/spec\/replicas must be number/],
  ])('rejects a copy with %s', (_what, file, original, expected) => {
    const text = read(file);
    expect(text).toContain(original);
    const broken: Record<string, string> = {
      'readOnlyRootFilesystem: true': 'readOnlyRootFileSystem: true',
      'hostUsers: false': 'hostUser: false',
      '      hostUsers: false': '      hostUsers: false\n          procMount: Unmasked',
      'targetPort: http': 'targetport: http',
      'replicas: 3': 'replicas: three',
    };
    const found = problems(text.replace(original, broken[original]!));
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toMatch(expected);
  });

  it('rejects a kind it has no schema for rather than passing it', () => {
    expect(problems('apiVersion: v1\nkind: Pood\nmetadata: { name: x }\n')).toEqual([
      'v1/Pood: no vendored schema for this kind',
    ]);
  });
});
