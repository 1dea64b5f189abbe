// The error bodies of the batch endpoints (§2.4): what src/errors/index.ts reads to classify an HTTP
// failure. In zod/mini and apart from the other batch schemas, so the error classes stay light
// in a browser bundle (docs/browser.md); 'svc-stream' exports them with the batch schemas.
import * as z from 'zod/mini';

// Each zod call is marked pure: esbuild does not read zod's own annotations through the
// namespace, and a page that imports an error class but no parser then carries no zod.

/** `{ detail: string }`, the body of every batch error but 422. */
export const ErrorResponseSchema = /* @__PURE__ */ z.looseObject({ detail: /* @__PURE__ */ z.string() });
/** A batch error body `{ detail }` (§2.4); match on `detail`, not only the status (§7.2). */
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;

/** Validates one `ValidationError` of a 422 body: `loc`, `msg` and `type` (§2.4). Infers {@link ValidationError}. */
export const ValidationErrorSchema = /* @__PURE__ */ z.looseObject({
  loc: /* @__PURE__ */ z.array(/* @__PURE__ */ z.union([/* @__PURE__ */ z.string(), /* @__PURE__ */ z.int()])),
  msg: /* @__PURE__ */ z.string(),
  type: /* @__PURE__ */ z.string(),
});
/** One item of a 422 body's `detail` array: where (`loc`) and why (`msg`, `type`) validation failed (§2.4). */
export type ValidationError = z.infer<typeof ValidationErrorSchema>;

/** The 422 body. */
export const HTTPValidationErrorSchema = /* @__PURE__ */ z.looseObject({ detail: /* @__PURE__ */ z.array(ValidationErrorSchema) });
/** The 422 body of a batch endpoint: `detail` is a list of {@link ValidationError} (§2.4, §7.1). */
export type HTTPValidationError = z.infer<typeof HTTPValidationErrorSchema>;
