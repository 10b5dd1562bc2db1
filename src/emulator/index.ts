export {
  type EmulatorOptions,
  type ResolvedEmulatorOptions,
  MAX_ACCOUNTS,
  resolveEmulatorOptions,
} from './emulator-options.js';
export {
  type GroundTruth,
  type TruthAccount,
  type TruthBalanceDetail,
  type TruthCustomer,
  type TruthLoyalty,
  type TruthLoyaltyStatus,
  type TruthLoyaltyWallet,
  type TruthPosting,
  type TruthReject,
  type TruthSurveyResponse,
  type TruthVoucher,
  groundTruthOf,
} from './ground-truth.js';
export { type DriftChange, driftedView } from './faults/drift-view.js';
export type { FaultCounts } from './faults/fault-layer.js';
export { ERROR_BODY_CODES, type FaultOptions, type ResolvedFaults, resolveFaults } from './faults/fault-options.js';
export type { DataViewContext, DataViewHook, ExportPageView } from './http/export-page-view.js';
export type { EmulatorRequest, EmulatorResponse, Middleware, RequestHandler } from './http/request-pipeline.js';
export { ApiError, SourceError } from './http/responses.js';
export {
  CUSTOM_FIELD_NAMES,
  CUSTOM_FIELD_POOL,
  INTEREST_OPTIONS,
  type CustomFieldDefinition,
} from './model/custom-field-pool.js';
export { LOYALTY_PROGRAM, LOYALTY_TIERS, POINT_VALUE } from './model/loyalty-tiers.js';
export { BONUS_EXPIRY_DAYS, pointsExpiryDays } from './model/point-expiry.js';
export { LISTED_DAYS_AFTER_USE, type VoucherStatus } from './model/vouchers.js';
export { ExpiryNotifier } from './webhook/expiry-notifier.js';
export { SourceData } from './model/source-data.js';
export { SURVEYS, type SurveyDefinition, type SurveyQuestion } from './model/survey-catalog.js';
export { type WebhookOptions, type WebhookStats, WebhookDispatcher } from './webhook/webhook-dispatcher.js';
export { LOYALTY_POINT_UPDATED, loyaltyUpdatedBody, loyaltyUpdatedBodyOf } from './webhook/loyalty-updated-body.js';
export { ActivityOverlay, type ProfileEdit } from './model/activity-overlay.js';
export {
  DEFAULT_READINGS,
  type EmulatorReadings,
  READING_NAMES,
  type ResolvedReadings,
  parseReadings,
  resolveReadings,
} from './readings/readings.js';
export { UNLISTED_FIELDS, type UnlistedRecordType, unlistedMembers } from './readings/unlisted-fields.js';
export {
  type Emulator,
  type EmulatorActivity,
  type EmulatorHooks,
  type StartEmulatorOptions,
  createEmulatorHandler,
  startEmulator,
} from './start-emulator.js';
