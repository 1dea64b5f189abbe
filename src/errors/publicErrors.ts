// The error hierarchy as users import it: the classes, their stable codes with the one table
// of what each means for a retry and a reconnect, and the close-code table (defined in
// src/errors/, with the factories the library builds errors with).
// Browser-safe: the main entry and 'svc-stream/browser' both export this list as it is.
export {
  ERROR_TABLE,
  ERROR_CODES,
  CLOSE_CODES,
  SvcError,
  ApiError,
  SessionError,
  InputError,
  ContractError,
  RelayError,
  AudioSourceError,
  isSvcError,
  type ErrorCode,
  type ErrorCodeRule,
  type CloseCodeRule,
  type AudioAccount,
  type SvcErrorOptions,
  type SessionErrorOptions,
} from './index.js';
export type { ValidationError } from './errorBody.js';
