// The one error hierarchy, by role: the table of codes (errors/codes.ts), the classes
// (errors/classes.ts), masking keys out of them (errors/masking.ts), and the classifier from
// what a server said to a typed error (errors/classify.ts). What users import is
// publicErrors.ts's list.
export * from './codes.js';
export * from './classes.js';
export { maskSecrets } from './masking.js';
export * from './classify.js';
