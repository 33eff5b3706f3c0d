/**
 * `/mcp` is POST only: GET and DELETE are 405 with `Allow: POST`, and the official MCP client keeps working
 * (the shared check of @adwire/agent-test-kit, against this agent on 127.0.0.1).
 */
import { describeMcpPostOnly } from '@adwire/agent-test-kit'
import { BUYER_TOKEN, startTestAgent } from './test-support.js'

describeMcpPostOnly(() => startTestAgent(), BUYER_TOKEN, 8)
