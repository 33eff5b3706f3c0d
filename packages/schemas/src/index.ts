export * from './generated/schemas.js'
