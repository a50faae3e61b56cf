/**
 * The palette: each node type, grouped by kind, dragged onto the canvas (HTML5 drag and drop). It
 * scrolls on its own and folds away under its title, so the Runs list below it stays in view on a
 * short screen.
 */
import { useState, type DragEvent } from 'react';
import { NODE_TYPE_SUMMARY, PALETTE, PALETTE_DRAG_TYPE } from '../flow/palette.js';
import type { NodeType } from '../../flows/nodeTypes.js';

/** Where the palette's folded state is kept between visits. */
const FOLDED_KEY = 'redflow.paletteFolded';

function onDragStart(event: DragEvent<HTMLElement>, type: NodeType): void {
  event.dataTransfer.setData(PALETTE_DRAG_TYPE, type);
  event.dataTransfer.setData('text/plain', type);
  event.dataTransfer.effectAllowed = 'move';
}

function storedFolded(): boolean {
  try {
    return window.localStorage.getItem(FOLDED_KEY) === 'true';
  } catch {
    return false; // storage refused (a private window): start unfolded
  }
}

/** The node palette: every node type, grouped by kind, as a draggable item for the canvas to drop. */
export function Palette() {
  const [folded, setFolded] = useState(storedFolded);
  const toggle = () => {
    const next = !folded;
    setFolded(next);
    try {
      window.localStorage.setItem(FOLDED_KEY, String(next));
    } catch {
      // not kept: it folds for this visit only
    }
  };
  return (
    <nav className={folded ? 'palette is-folded' : 'palette'} aria-label="node palette" data-testid="palette" data-folded={folded}>
      <button type="button" className="panel-title palette__toggle" onClick={toggle} aria-expanded={!folded} data-testid="palette-toggle" title={folded ? 'show the node palette' : 'fold the node palette away'}>
        <span aria-hidden="true">{folded ? '▸' : '▾'}</span> Nodes
      </button>
      {!folded && (
        <div className="palette__groups" data-testid="palette-groups">
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
        </div>
      )}
    </nav>
  );
}
