import { readFileSync } from 'node:fs'

/** A secret given by env either inline (JSON, PEM) or as the path of its file. */
export function inlineOrFile(value: string, inlineStart: string): string {
  return value.startsWith(inlineStart) ? value : readFileSync(value, 'utf8')
}

/** What a Google service account's JSON key holds that FCM needs. */
export interface ServiceAccount {
  client_email: string
  private_key: string
  private_key_id?: string
  project_id?: string
  token_uri?: string
}

export function readServiceAccount(value: string): ServiceAccount {
  const account = JSON.parse(inlineOrFile(value, '{')) as ServiceAccount
  if (!account.client_email || !account.private_key)
    throw new Error('GATEWAYS_FCM_SERVICE_ACCOUNT: client_email and private_key are required')
  return account
}
