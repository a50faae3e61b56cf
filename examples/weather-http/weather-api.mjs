// A tiny local weather API for the tool.http example, so it runs without the internet.
// `node examples/weather-http/weather-api.mjs` serves it on 127.0.0.1:8787 until stopped.
import { createServer } from 'node:http';

const forecasts = {
  paris: { city: 'Paris', today: 'light rain', highC: 11, lowC: 6 },
  lisbon: { city: 'Lisbon', today: 'sunny', highC: 19, lowC: 12 },
};

/** Starts the API; resolves with the server once it listens. */
export function startWeatherApi(port = Number(process.env.WEATHER_API_PORT ?? 8787)) {
  const server = createServer((request, response) => {
    const match = /^\/forecast\/([^/?]+)/.exec(request.url ?? '');
    const forecast = match ? forecasts[decodeURIComponent(match[1]).toLowerCase()] : undefined;
    response.setHeader('content-type', 'application/json');
    if (!forecast) {
      response.statusCode = 404;
      response.end(JSON.stringify({ error: 'unknown city; try Paris or Lisbon' }));
      return;
    }
    response.end(JSON.stringify(forecast));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startWeatherApi();
  console.log(`weather API on http://127.0.0.1:${server.address().port}/forecast/<city>`);
}
