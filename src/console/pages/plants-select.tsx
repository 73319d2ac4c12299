import { useRef } from 'preact/hooks'

/** A labelled drop-down: its label is its accessible name. */
export function SelectField({
  label,
  value,
  options,
  onChange,
}: {
  label: string
  value: string
  /** Each option's value and text. */
  options: Array<[string, string]>
  onChange: (value: string) => void
}) {
  const id = useRef(`select-${Math.random().toString(36).slice(2)}`).current
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {options.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}
