export declare const BROKERS: Record<'rabbitmq' | 'redis' | 'nats', { env: string; url: string }>
export declare function resolveTestBroker(kind: 'rabbitmq' | 'redis' | 'nats'): Promise<string | undefined>
