/**
 * loyalty-etl as a library: what the command line is built from, for embedding the pipeline in another
 * scheduler or service. The command line (`loyalty-etl`) is the main interface; see README.md.
 */
export { buildProgram, main } from './cli/main.js';
export { ConfigError } from './config/config-error.js';
export type { ConfigFile } from './config/config-schema.js';
export { loadConfig, parseConfig, resolveJobPlan, type ResolvedConfig } from './config/load-config.js';
export {
  STREAM_NAMES,
  type DestinationSettings,
  type JobPlan,
  type JobSettings,
  type SourceSettings,
  type StreamName,
} from './plan/job-plan.js';
export type { Destination, DestinationCapabilities, SpanLoad, SpanLoadRequest } from './load/destination.js';
export { openDestination } from './load/warehouses.js';
export type { SqlConnection } from './load/warehouse/sql-connection.js';
export { createLogger, silentLogger, type Logger } from './log/logger.js';
export { loadSpan } from './pipeline/load-span.js';
export type { JobRunRequest, JobRunResult } from './pipeline/job-run-request.js';
export { runJob } from './pipeline/run-job.js';
export { planIncrementalWindows, planRange } from './plan/plan-windows.js';
export { planWindows, type Window } from './plan/windows.js';
export { HttpClient, type HttpClientOptions } from './source/http-client.js';
export { LoyaltyApi } from './source/loyalty-api.js';
export {
  CancelledRequestError,
  DataNotFoundError,
  FatalSourceError,
  RetriableSourceError,
  SourceError,
} from './source/source-errors.js';
export { streamDefinition, STREAM_ORDER } from './streams/registry.js';
export type { StreamContext, StreamDefinition } from './streams/stream.js';
export { parseSourceDate, parseSourceTimestamp } from './transform/timestamps.js';
export { startEmulator, type Emulator, type EmulatorOptions } from './emulator/index.js';
