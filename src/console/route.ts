import { useEffect, useState } from 'preact/hooks'

/**
 * The console's address is its hash (`#/plants`, `#/webhooks/<id>`): the page is one file, and what
 * is after the # never reaches a server or its logs.
 */
export function currentRoute(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent)
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const changed = () => setRoute(currentRoute())
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}

/** The href of a console page: `href('webhooks', id)` is `#/webhooks/<id>`. */
export const href = (...parts: Array<string | bigint>): string =>
  `#/${parts.map((part) => encodeURIComponent(String(part))).join('/')}`

export const go = (...parts: Array<string | bigint>): void => {
  location.hash = href(...parts)
}
