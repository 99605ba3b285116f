/** The reference server as a library: build the service, or just its express app, for tests and embedding. */
export { type AppDeps, createApp } from './app.ts';
export { createBusiness, rollKey } from './businesses/onboarding.ts';
export {
  ConfigError,
  checkTimeouts,
  defaultConfig,
  resolveConfig,
  type ServerConfig,
  type ServerConfigOverrides,
  type TimeoutSetting,
} from './config.ts';
export { type Backend, openBackend } from './db/backend.ts';
export { openDatabase } from './db/database.ts';
export { createSqliteStore, type Store } from './db/store.ts';
export { type Clock, ManualClock, systemClock } from './internal/clock.ts';
export { createJsonLogger, type Logger, silentLogger } from './internal/logger.ts';
export { type BackgroundTask, createService, type Service, type ServiceOptions } from './service.ts';
