// The one error hierarchy, by role: the table of codes (errors/codes.ts), the classes
// (errors/classes.ts), masking keys out of them (errors/masking.ts), and the classifier from
// what a server said to a typed error (errors/classify.ts).
export { ERROR_TABLE, ERROR_CODES, CLOSE_CODES, ruleOf, type ErrorCode, type ErrorCodeRule, type CloseCodeRule } from './errors/codes.js';
export {
  SvcError,
  ApiError,
  SessionError,
  InputError,
  ContractError,
  RelayError,
  AudioSourceError,
  isSvcError,
  type AudioAccount,
  type SvcErrorOptions,
  type SessionErrorOptions,
} from './errors/classes.js';
export { maskSecrets } from './errors/masking.js';
export { classifyDetail, errorFromHttp, errorFromClose } from './errors/classify.js';
