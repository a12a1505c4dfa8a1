import { render } from 'preact';
import { loadSite } from '../site.ts';
import { App } from './app.tsx';
import '../style.css';

void loadSite();
render(<App />, document.getElementById('app')!);
