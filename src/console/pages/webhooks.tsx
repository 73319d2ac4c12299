import { Page } from '../ui.js'

export function WebhooksPage() {
  return <Page title="Webhooks">{null}</Page>
}
