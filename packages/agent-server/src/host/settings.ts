/**
 * Where an agent host keeps what it generates at its first start (the signing keys, the generated token's
 * digest): a small name → value table in the agent's own database, shared by every instance on it.
 */

/** A settings table: read a value, or store one unless another instance stored it first. */
export interface SettingsStore {
  /** The stored value, or undefined. */
  getSetting(name: string): Promise<string | undefined>
  /** Stores `value` unless the setting exists; resolves with the value stored now (the first writer wins). */
  putSettingIfAbsent(name: string, value: string): Promise<string>
}
