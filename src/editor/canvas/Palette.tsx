/** The palette: each node type, grouped by kind, dragged onto the canvas (HTML5 drag and drop). */
import type { DragEvent } from 'react';
import { NODE_TYPE_SUMMARY, PALETTE, PALETTE_DRAG_TYPE } from '../flow/palette.js';
import type { NodeType } from '../../flows/nodeTypes.js';

function onDragStart(event: DragEvent<HTMLElement>, type: NodeType): void {
  event.dataTransfer.setData(PALETTE_DRAG_TYPE, type);
  event.dataTransfer.setData('text/plain', type);
  event.dataTransfer.effectAllowed = 'move';
}

/** The node palette: every node type, grouped by kind, as a draggable item for the canvas to drop. */
export function Palette() {
  return (
    <nav className="palette" aria-label="node palette" data-testid="palette">
      {PALETTE.map((group) => (
        <section key={group.role} className={`palette__group palette__group--${group.role}`}>
          <h3 className="palette__title">{group.title}</h3>
          {group.types.map((type) => (
            <div
              key={type}
              className="palette__item"
              draggable
              onDragStart={(event) => onDragStart(event, type)}
              data-testid={`palette-${type}`}
              title={`drag onto the canvas: ${NODE_TYPE_SUMMARY[type]}`}
            >
              <span className="palette__type">{type}</span>
              <span className="palette__hint">{NODE_TYPE_SUMMARY[type]}</span>
            </div>
          ))}
        </section>
      ))}
    </nav>
  );
}
