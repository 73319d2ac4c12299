import { Page } from '../ui.js'

export function LivePage() {
  return <Page title="Live">{null}</Page>
}
