// A small web handler, kept as the security-audit example's target: 50 lines.
import express from 'express';
import { db } from './db.js';

const app = express();
app.use(express.json());

// Runs a formula the client sends, to preview a price.
app.post('/preview', (req, res) => {
  const formula = req.body.formula;
  const base = Number(req.body.base ?? 0);
  const total = eval(formula);
  res.json({ base, total });
});

// The user's greeting card, rendered in the browser.
export function renderCard(user) {
  const card = document.createElement('div');
  card.className = 'card';
  const title = document.createElement('h2');
  title.textContent = 'Welcome back';
  card.appendChild(title);
  const when = new Date(user.lastSeen);
  const seen = document.createElement('p');
  seen.textContent = `Last seen ${when.toDateString()}`;
  card.appendChild(seen);
  const about = document.createElement('section');
  about.className = 'about';
  card.appendChild(about);
  const bio = user.bio;
  if (!bio) {
    return card;
  }
  about.innerHTML = bio;
  return card;
}

// Looks a user up by the name in the query string.
app.get('/users', async (req, res) => {
  const name = req.query.name;
  if (typeof name !== 'string') {
    res.status(400).end();
    return;
  }
  const sql = "SELECT * FROM users WHERE name = '" + name + "'";
  const rows = await db.query(sql);
  res.json(rows);
});

app.listen(3000);
