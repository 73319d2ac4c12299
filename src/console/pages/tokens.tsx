import { Page } from '../ui.js'

export function TokensPage() {
  return <Page title="Tokens">{null}</Page>
}
