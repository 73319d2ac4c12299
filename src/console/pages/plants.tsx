import { Page } from '../ui.js'

export function PlantsPage() {
  return <Page title="Plants">{null}</Page>
}
