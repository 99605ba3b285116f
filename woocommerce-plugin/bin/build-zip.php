<?php
/**
 * Packs the installable plugin: servicepay-woocommerce.zip, unpacking to servicepay-woocommerce/, with the
 * built scripts and without tests, sources of the scripts, or development files.
 *
 * Usage: php bin/build-zip.php (from the plugin folder; `npm run build` runs it after the scripts are built).
 *
 * @package ServicePay\WooCommerce
 */

$root = dirname( __DIR__ );
$out  = $root . '/servicepay-woocommerce.zip';
$ship = array( 'servicepay-woocommerce.php', 'uninstall.php', 'readme.txt', 'README.md', 'src', 'build', 'languages' );

if ( ! is_file( $root . '/build/blocks.js' ) || ! is_file( $root . '/build/classic.js' ) ) {
	fwrite( STDERR, "build/ is missing the scripts: run wp-scripts build first (npm run build)\n" );
	exit( 1 );
}
@unlink( $out );
$zip = new ZipArchive();
if ( true !== $zip->open( $out, ZipArchive::CREATE | ZipArchive::EXCL ) ) {
	fwrite( STDERR, "cannot create $out\n" );
	exit( 1 );
}
$count = 0;
foreach ( $ship as $entry ) {
	$path = $root . '/' . $entry;
	if ( is_file( $path ) ) {
		$zip->addFile( $path, 'servicepay-woocommerce/' . $entry );
		++$count;
		continue;
	}
	if ( ! is_dir( $path ) ) {
		continue;
	}
	$zip->addEmptyDir( 'servicepay-woocommerce/' . $entry );
	$files = new RecursiveIteratorIterator( new RecursiveDirectoryIterator( $path, FilesystemIterator::SKIP_DOTS ) );
	foreach ( $files as $file ) {
		$relative = substr( $file->getPathname(), strlen( $root ) + 1 );
		// Source maps, and dotfiles (editor and OS leftovers).
		if ( str_ends_with( $relative, '.map' ) || str_starts_with( $file->getFilename(), '.' ) ) {
			continue;
		}
		$zip->addFile( $file->getPathname(), 'servicepay-woocommerce/' . $relative );
		++$count;
	}
}
$zip->close();
echo "servicepay-woocommerce.zip: $count files\n";
