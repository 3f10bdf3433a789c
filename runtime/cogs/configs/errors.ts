/**
 * Errors of the configuration: settings and storages set up in a way that cannot work. Both are a
 * misuse by the operator's code (a value a setting cannot take, an empty storage prefix), so both
 * are `TypeError`s (docs/architecture.md, "Errors").
 */

/** A setting was given a value it cannot take. */
export class SettingsError extends TypeError {
  readonly code = 'InvalidSetting' as const;
  override readonly name = 'SettingsError';
}

/** A storage was configured in a way that cannot work. */
export class StorageConfigError extends TypeError {
  readonly code = 'StorageConfig' as const;
  override readonly name = 'StorageConfigError';
}
