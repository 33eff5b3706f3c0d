export {
  FormatCatalog,
  fixedSize,
  isResponsive,
  normalizeAgentUrl,
  standardCatalog,
  type CatalogFormat,
  type FormatType,
} from './catalog.js'
export {
  FormatsError,
  type FormatsErrorCode,
  type FormatsErrorOptions,
  type FormatsErrorRecovery,
} from './errors.js'
export { matchesFilters } from './filters.js'
export {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  listCreativeFormats,
  type CreativeAgentRef,
  type ListCreativeFormatsOptions,
  type ListCreativeFormatsResponse,
} from './list-creative-formats.js'
