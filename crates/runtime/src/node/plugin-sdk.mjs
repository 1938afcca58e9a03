// Toolhost's copy of `@platypuschat/plugin-sdk`, for plugins that do not ship their own (the
// package is not published on npm). The SDK's only runtime exports are these constants;
// everything else in it is a TypeScript type.
export const PLUGIN_API_VERSION = 3;
export const OLDEST_SUPPORTED_API_VERSION = 2;
export const SANDBOX_TRANSFER_MAX_BYTES = 25 * 1024 * 1024;
