import './console.css'
import { render } from 'preact'
import { App } from './app.js'

const root = document.getElementById('console')
if (root) {
  root.textContent = ''
  render(<App />, root)
}
