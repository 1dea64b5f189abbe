// The error hierarchy as users import it: the classes, their stable codes and the close-code
// table (defined in src/errors.ts, with the factories the library builds errors with).
// Browser-safe: the main entry and 'svc-stream/browser' both export this list as it is.
export {
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
  type AudioAccount,
  type SvcErrorOptions,
} from './errors.js';
export type { ValidationError } from './schema/errorBody.js';
