// The module src/editor/configValidatorsPlugin.ts generates at build time from the schemas.
declare module 'virtual:redflow/config-validators' {
  import type { ValidateFunction } from 'ajv';
  /**
   * The node configs' validators, precompiled (no `new Function` in the browser): each `*Config`
   * definition of `flow.schema.json` by its name, and `AgentCoreConfig`.
   */
  const validators: Readonly<Record<string, ValidateFunction | undefined>>;
  export default validators;
}
