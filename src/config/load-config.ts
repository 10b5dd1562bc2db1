import { createHash } from 'node:crypto';
import { busyTimeoutOf } from './duckdb-files.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import type {
  AnalystsPolicy,
  AnalystsSettings,
  DestinationSettings,
  JobPlan,
  JobSettings,
  SourceSettings,
} from '../plan/job-plan.js';
import { configFileSchema, type ConfigFile } from './config-schema.js';

/** The configuration with defaults filled in, environment overrides applied and secrets collected. */
export interface ResolvedConfig {
  /** Path of the file it came from. */
  file: string;
  source: SourceSettings;
  destination: DestinationSettings;
  jobs: Record<string, JobSettings>;
  /**
   * Seconds a run's claims and run lock outlive its process should it die without finishing
   * (`LOYALTY_LEASE_SECONDS`, default 60); a live process renews its lease every third of that.
   */
  leaseSeconds: number;
  /** Values that must never reach logs, errors or tables (the auth token, database passwords). */
  secrets: string[];
  /** What analysts read of personal data (`destination.analysts`, `LOYALTY_PII_SALT`). */
  analysts: AnalystsPolicy;
  /** `metrics.file`: where a load writes its Prometheus metrics unless `--metrics-file` says otherwise. */
  metricsFile?: string;
}

type Env = Record<string, string | undefined>;

/**
 * The plan of one job of `config`: what its runs and backfills need, taken from the file once.
 *
 * @throws ConfigError when the file has no job of that name.
 */
export function resolveJobPlan(config: ResolvedConfig, name: string): JobPlan {
  const job = config.jobs[name];
  if (!job)
    throw new ConfigError(config.file, 'jobs', `no job named '${name}' (jobs: ${Object.keys(config.jobs).join(', ')})`);
  const { source } = config;
  return {
    name,
    job,
    historyStart: source.history_start,
    timezone: source.timezone,
    pageSize: source.page_size,
    exportEnd: source.export_end,
    firstPage: source.first_page,
    multipleChoice: source.multiple_choice,
    sourceConcurrency: source.concurrency,
    requestsPerSecond: source.requests_per_second,
    leaseSeconds: config.leaseSeconds,
    schemaContract: config.destination.analysts?.schema_contract ?? 'evolve',
    stopAfterNoAnswer: source.stop_after_no_answer,
    sourceUrl: withoutCredentials(source.base_url),
  };
}

/** `url` without a user name or password, which must never be printed. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return '(the source)';
  }
}

/**
 * Reads `jobs.yaml`, substitutes `${VAR}` and `${VAR:-default}` from the environment, validates it and
 * applies the `LOYALTY_*` overrides.
 *
 * @example
 * const config = loadConfig('jobs.yaml');
 * config.jobs.nightly.window_days // 1
 */
export function loadConfig(file = 'jobs.yaml', env: Env = process.env): ResolvedConfig {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(file, '', code === 'ENOENT' ? 'file not found' : `cannot be read (${code ?? String(error)})`);
  }
  return parseConfig(text, file, env);
}

/** Same as {@link loadConfig}, from text already read; `file` only names it in errors. */
export function parseConfig(text: string, file: string, env: Env = process.env): ResolvedConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const { line } = lineCounter.linePos(first.pos[0]);
    throw new ConfigError(file, `line ${line}`, `is not valid YAML: ${first.message.split('\n')[0]}`);
  }
  const raw = substituteEnv(documentValue(doc, file) ?? {}, file, [], env);
  const parsed = configFileSchema.safeParse(raw);
  if (!parsed.success) throw toConfigError(file, parsed.error);
  return applyOverrides(parsed.data, file, env);
}

/**
 * The document's value. Aliases expand as they are read, so a few lines of nested aliases can stand for billions of
 * nodes: the `yaml` library stops past a hundred expansions (`maxAliasCount`), and that is a mistake in the file.
 */
function documentValue(doc: ReturnType<typeof parseDocument>, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    throw new ConfigError(file, '', `is not valid YAML: ${error.message}`);
  }
}

function toConfigError(file: string, error: z.ZodError): ConfigError {
  const issue = error.issues[0]!;
  const key = issue.path.map(String).join('.');
  let problem = issue.message;
  if (issue.code === 'unrecognized_keys')
    problem = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) problem = 'is required';
  const more =
    error.issues.length > 1
      ? ` (and ${error.issues.length - 1} more problem${error.issues.length > 2 ? 's' : ''})`
      : '';
  return new ConfigError(file, key, problem + more);
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function substituteEnv(value: unknown, file: string, path: string[], env: Env): unknown {
  if (typeof value === 'string') {
    return value.replace(VAR, (_, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(
        file,
        path.join('.'),
        `environment variable ${name} is not set (write \${${name}:-default} for a default)`,
      );
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, file, [...path, String(i)], env));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, file, [...path, k], env)]));
  }
  return value;
}

function applyOverrides(config: ConfigFile, file: string, env: Env): ResolvedConfig {
  const source = { ...config.source, auth: { ...config.source.auth } };
  let destination: DestinationSettings = config.destination;
  if (env.LOYALTY_API_URL) {
    if (!/^https?:\/\//.test(env.LOYALTY_API_URL))
      throw new ConfigError('LOYALTY_API_URL', '', 'must be an http(s) URL');
    source.base_url = env.LOYALTY_API_URL;
  }
  if (env.LOYALTY_API_TOKEN) source.auth.token = env.LOYALTY_API_TOKEN;
  if (env.LOYALTY_INTEGRATION_TOKEN) source.integration_token = env.LOYALTY_INTEGRATION_TOKEN;
  if (env.LOYALTY_TIMEZONE) {
    const check = configFileSchema.shape.source.shape.timezone.safeParse(env.LOYALTY_TIMEZONE);
    if (!check.success) throw new ConfigError('LOYALTY_TIMEZONE', '', check.error.issues[0]!.message);
    source.timezone = env.LOYALTY_TIMEZONE;
  }
  if (env.LOYALTY_WAREHOUSE) destination = warehouseFromEnv(env.LOYALTY_WAREHOUSE, destination);
  // the stages read the wait from the settings; the environment's, when given, is the one that counts
  if (env.LOYALTY_BUSY_TIMEOUT_S) destination = { ...destination, busy_timeout_s: busyTimeoutOf(destination, env) };
  source.base_url = source.base_url.replace(/\/+$/, '');
  refuseUserinfo(
    source.base_url,
    env.LOYALTY_API_URL ? 'LOYALTY_API_URL' : file,
    env.LOYALTY_API_URL ? '' : 'source.base_url',
  );
  refuseBadHeaderValue(source.auth.prefix, file, 'source.auth.prefix');
  refuseBadHeaderValue(
    source.auth.token,
    env.LOYALTY_API_TOKEN ? 'LOYALTY_API_TOKEN' : file,
    env.LOYALTY_API_TOKEN ? '' : 'source.auth.token',
  );
  const analysts = analystsPolicyOf(file, destination, env);
  const secrets = [
    source.auth.token,
    source.integration_token,
    destination.type === 'postgres' ? passwordOf(destination.url) : '',
    env[PII_SALT_VARIABLE] ?? '',
    analysts.key ?? '',
  ].filter((s) => s.length >= 3);
  return {
    file,
    source,
    destination,
    jobs: config.jobs,
    leaseSeconds: leaseSecondsOf(env.LOYALTY_LEASE_SECONDS),
    secrets,
    analysts,
    ...(config.metrics?.file ? { metricsFile: config.metrics.file } : {}),
  };
}

/** The key personal data is hashed with, from the salt: SHA-256 of a fixed line and the salt, as hex. */
export function personalDataKey(salt: string): string {
  return createHash('sha256').update(`loyalty-etl personal data\n${salt}`).digest('hex');
}

/** The environment variable the hashes of personal data are salted from. */
export const PII_SALT_VARIABLE = 'LOYALTY_PII_SALT';

/**
 * `destination.analysts` resolved. The salt itself is never kept: the key is SHA-256 of it, so the same salt gives the
 * same hashes in every warehouse and every run. Without a salt the key is absent, and the warehouse gives its own
 * (`load/derived/pii-key.ts`).
 */
function analystsPolicyOf(file: string, destination: DestinationSettings, env: Env): AnalystsPolicy {
  const settings: AnalystsSettings = destination.analysts ?? { personal_data: 'hash' };
  const schema = destination.type === 'postgres' ? (settings.schema ?? `${destination.schema}_analysts`) : undefined;
  if (settings.schema !== undefined && destination.type !== 'postgres')
    throw new ConfigError(
      file,
      'destination.analysts.schema',
      'is for PostgreSQL: DuckDB analysts read the published copy',
    );
  if (schema !== undefined && schema === destination.schema)
    throw new ConfigError(file, 'destination.analysts.schema', `must differ from the warehouse's schema ${schema}`);
  const salt = env[PII_SALT_VARIABLE];
  const pipelineTables = settings.pipeline_tables ?? false;
  if (settings.personal_data !== 'hash' || !salt)
    return { personalData: settings.personal_data, schema, pipelineTables };
  return {
    personalData: 'hash',
    key: personalDataKey(salt),
    schema,
    pipelineTables,
  };
}

function warehouseFromEnv(value: string, current: DestinationSettings): DestinationSettings {
  if (/^postgres(ql)?:\/\//.test(value)) {
    return {
      type: 'postgres',
      url: value,
      schema: current.type === 'postgres' ? current.schema : 'public',
      analysts: current.analysts,
    };
  }
  if (/^[a-z]+:\/\//i.test(value))
    throw new ConfigError('LOYALTY_WAREHOUSE', '', 'must be a .duckdb file path or a postgres:// URL');
  return {
    type: 'duckdb',
    path: value,
    schema: current.type === 'duckdb' ? current.schema : 'main',
    analysts: current.analysts,
  };
}

/**
 * The service's URL may not carry a user or password: every request, log line, error and archived answer names the
 * URL, and the credential has its own place (`source.auth`), which is kept out of them all. The value is not quoted.
 */
function refuseUserinfo(url: string, file: string, key: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // the schema already refused it
  }
  if (parsed.username === '' && parsed.password === '') return;
  throw new ConfigError(
    file,
    key,
    'must not hold a user or password (user:password@): put the credential in source.auth and LOYALTY_API_TOKEN',
  );
}

/** Characters an HTTP header value may hold (RFC 9110: visible characters, space and tab; no CR, LF or NUL). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A header value with a line break or another control character would be refused by every request: say so once. */
function refuseBadHeaderValue(value: string, file: string, key: string): void {
  if (HEADER_VALUE.test(value)) return;
  throw new ConfigError(
    file,
    key,
    'holds a line break or another control character, which no HTTP header may carry (a copied token with its newline?)',
  );
}

/** The password of a PostgreSQL URL, in its user part or its `password` parameter (libpq reads either). */
function passwordOf(url: string): string {
  try {
    const parsed = new URL(url);
    return decodeURIComponent(parsed.password) || (parsed.searchParams.get('password') ?? '');
  } catch {
    return '';
  }
}

/** Seconds a run outlives its last lease renewal when `LOYALTY_LEASE_SECONDS` says nothing. */
export const DEFAULT_LEASE_SECONDS = 60;

function leaseSecondsOf(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_LEASE_SECONDS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1 || n > 86_400)
    throw new ConfigError('LOYALTY_LEASE_SECONDS', '', `${raw} is not a number of seconds from 1 to 86400`);
  return n;
}
