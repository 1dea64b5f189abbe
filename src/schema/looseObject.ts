// `z.looseObject` on zod core's compiled object parser, for the event schemas and the parser.
import * as z from 'zod/mini';
import * as core from 'zod/v4/core';

/**
 * `z.looseObject`, on zod core's compiled object parser. zod/mini's own object parser is the
 * interpreted one, 1.4 times slower per event (bench/parse.ts); the compiled one is what
 * classic zod uses, and it falls back to the interpreter where a page's CSP forbids `eval`.
 */
type Init = (inst: z.ZodMiniObject, def: z.ZodMiniObject['_zod']['def']) => void;
const CompiledObject = /* @__PURE__ */ core.$constructor('ZodMiniObject', (inst: z.ZodMiniObject, def: z.ZodMiniObject['_zod']['def']) => {
  (core.$ZodObjectJIT.init as Init)(inst, def);
  (z.ZodMiniType.init as Init)(inst, def);
  core.util.installLazyProp(inst, 'shape', (self: z.ZodMiniObject) => self._zod.def.shape, false);
});
/* @__NO_SIDE_EFFECTS__ */
export function looseObject<S extends core.$ZodLooseShape>(shape: S): z.ZodMiniObject<S, core.$loose> {
  return new CompiledObject({ type: 'object', shape, catchall: z.unknown() }) as unknown as z.ZodMiniObject<S, core.$loose>;
}
