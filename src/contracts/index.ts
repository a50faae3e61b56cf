export * from './schema-types.js';
export { validators, compileUserSchema, describeSchemaErrors, loadSchema, SchemaFile } from './schemas.js';
export type { InputValidator } from './schemas.js';
